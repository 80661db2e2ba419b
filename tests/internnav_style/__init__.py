"""A small extension package written the way InternNav extends InternUtopia (in our own words).

It registers a custom H1 (links found by prim path in ``post_reset``, an ankle-height check), a
discrete-action controller that drives H1's ``move_by_speed`` through ``sub_controllers[0].forward``,
a vision-and-language-navigation style task that adds GPS readings to the robot's observations
and ends on a fall, arrival or a step limit, and a metric that reads those task observations.
Importing the package registers them; ``configs`` holds their config classes.
"""

from tests.internnav_style import controllers, metrics, robots, tasks  # noqa: F401
