"""Ways a person drives a robot while the env runs (InternUtopia's ``interactions`` package): hand frames from
motion capture (:mod:`.motion_capture`)."""
