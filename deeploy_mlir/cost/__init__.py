"""Cost models: cycles per training and optimizer step on a board."""
