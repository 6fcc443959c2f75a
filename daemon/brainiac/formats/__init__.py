"""The vault's Markdown formats as text: notes (frontmatter, sections, fenced code),
event lines, the marks on generated lines, observation lines, the short-term document,
long-term notes, and a sync tool's conflict copy merged back. Parsing never changes a
byte. Pure: no files, no index; above core/ and below language/, which reads it."""
