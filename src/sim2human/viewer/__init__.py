"""The run viewer: ``sim2human view`` and ``sim2human compare`` as self-contained HTML files.

``build_view`` reads a run directory (``viewer.load``), turns its evaluation episodes into
compact rows (``viewer.data``) and renders the page (``viewer.page``); ``viewer.compare`` puts two
runs, or two conditions of one, side by side. No server and no network: the file opens anywhere.
"""
