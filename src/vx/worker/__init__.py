"""`vx worker`: a Remote Workers API bot that runs REAPI actions for a server."""
