# The game tables, seats and move log arrive with later issues. The rules themselves live
# in games/engine/, a pure-Python package that imports nothing from Django.
