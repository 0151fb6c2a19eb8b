"""Output parsers, one module per format; registered by name in :data:`eval_skills.agents.output.PARSERS`."""
