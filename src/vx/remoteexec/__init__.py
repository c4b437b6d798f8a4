"""Remote execution over REAPI: actions built from tasks, run on a server's workers."""
