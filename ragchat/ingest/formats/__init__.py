"""One parser module per file format; each turns text (or bytes) into an Outline."""
