"""Fixture checks (``eval-skills fixtures``): each Agent Skills folder's ``evals/`` cases graded on the expected
outputs they ship, with no agent run; ``check`` holds the whole check."""
