"""The command: thin verbs over the layers below (``app`` is the typer app and ``main``)."""
