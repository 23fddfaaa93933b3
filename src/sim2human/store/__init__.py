"""The storage wing (layer 0): everything that reads or writes a file of a run directory, or the
call page's database, and nothing that knows what a conversation is.

- ``layout``: the name of every file and folder of a run directory (``RunLayout``);
- ``rundir``: the run directory's files (episode logs, JSON, JSONL writers);
- ``lock``: the writer's lock on a run directory and readers' shared locks;
- ``loading``: reading run files and study files safely (size limits, damaged lines named);
- ``calls``: the call page's SQLite database (sessions, turns, ratings);
- ``collector``: garbage-collector settings for long runs and for reading big logs.
"""
