"""Ways a person drives a robot while the env runs (InternUtopia's ``interactions`` package): the
keyboard, from a terminal or the web viewer (:mod:`.keyboard`), and hand frames from motion
capture (:mod:`.motion_capture`)."""
