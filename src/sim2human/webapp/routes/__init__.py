"""The web app's routers: the front door, one call's pages, and the admin page."""
