"""The grounded-QA benchmark: cases written from reading the test corpus's papers (gold paper ids
and a gold evidence quote copied from each), its loader and checks, its runner and metrics."""
