-- What an answer showed beside its text, kept so a reopened chat shows the same: its numbered
-- sources (title, authors, year, passage), its grounding check, and whether it declined because the
-- corpus does not cover the question.
ALTER TABLE messages ADD COLUMN sources jsonb NOT NULL DEFAULT '[]';
ALTER TABLE messages ADD COLUMN grounding jsonb;
ALTER TABLE messages ADD COLUMN abstained boolean NOT NULL DEFAULT false;
