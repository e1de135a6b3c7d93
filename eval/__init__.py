"""`chatpapers eval`: readability and RAGAS reports. Built in the eval issue."""
