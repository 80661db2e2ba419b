"""H1's trained walking policy (``h1_walk.onnx``), the script that trained it (:mod:`.train`) and its figures."""
