"""Puzzle and solution images: the renderer and its cache."""
