"""Static memory planning: lifetimes, arena offsets and the lower bound."""
