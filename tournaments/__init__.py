"""Tournaments: events an organiser runs from the site, whose players the site seats, tells and
moves on by itself. ``seating`` and ``standings`` are the rules of the formats, pure Python
(no Django, like ``games.engine``): who sits where each round, and who stands where."""
