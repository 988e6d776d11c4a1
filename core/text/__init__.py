"""Text: documents and their paragraphs, file formats and encodings, tokens, lexical tools, segments."""
