"""Reading what people say: the facts, goals and tasks a turn states (and whether a
fact line's new value restates the old one), observations, values compared, titles and
topics, the months a memory is about, credentials masked, the sentence model's tokens.
Pure: no files, no index, no model; above formats/, whose event lines it reads."""
