"""`gpuscope doctor`: what this machine can profile — vendor, GPUs, drivers, which tools can run
here, environment traps (`diagnose`), laid out as a document (`layout`)."""
