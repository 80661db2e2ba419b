"""Compatibility tools for InternUtopia 2.x users: the runner of upstream's own test scripts.

The compatible names themselves live where InternUtopia has them (``internutopia.core...``);
this package only holds tools that check them (see ``docs/compatibility.md``).
"""
