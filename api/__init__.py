"""The FastAPI service for the web chat. Built in the web issue."""
