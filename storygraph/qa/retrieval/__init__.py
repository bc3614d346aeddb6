"""Finding the question's facts and sentences in the graph, scoring them, and the sources the
answer is written from."""
