"""What a stored debate becomes for people: the Markdown report and the JSON export."""
