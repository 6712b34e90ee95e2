"""Tiling as a library: the tile problem and its cost (model), the search
(search) and the per-op selection of tile-select (select)."""
