"""One module per `chatpapers` command: options, help text and output; the work is done below."""
