"""Level-labelled questions (BSc / MSc / PhD) and the training of the level judgement on them."""
