"""``VideoStream``: a camera's frames as an MP4 that decodes back to the frames (with and without
x264's ``zerolatency`` tuning), and ``VideoOptions`` refusing options the encoder does not have."""

from __future__ import annotations

import numpy as np
import pytest

av = pytest.importorskip('av', reason='recording needs the dataset extra (PyAV)')

from internutopia.recording.video import X264_TUNES, VideoOptions, VideoStream  # noqa: E402


def _frames(count: int) -> list[np.ndarray]:
    y, x = np.mgrid[0:96, 0:128]
    frames = []
    for k in range(count):  # a smooth background and a white square moving right, like a camera image
        frame = np.stack([x * 2, y * 2, (x + y)], axis=-1).astype(np.uint8)
        frame[30:60, 10 + 3 * k:40 + 3 * k] = 255
        frames.append(frame)
    return frames


@pytest.mark.parametrize('tune', [None, 'zerolatency'])
def test_frames_decode_back_to_what_was_written(tmp_path, tune):
    frames = _frames(24)
    path = str(tmp_path / 'camera.mp4')
    stream = VideoStream(path, 128, 96, 30.0, VideoOptions(tune=tune))
    for frame in frames:
        stream.write(frame)
    stream.close()
    with av.open(path) as container:
        decoded = [frame.to_ndarray(format='rgb24') for frame in container.decode(video=0)]
    assert len(decoded) == len(frames)
    for written, read in zip(frames, decoded, strict=True):
        mse = np.mean((written.astype(float) - read.astype(float)) ** 2)
        assert 10 * np.log10(255 ** 2 / max(mse, 1e-9)) > 30.0  # dB: H.264 at crf 23, yuv420p


def test_a_tune_the_encoder_does_not_have_is_refused_naming_the_valid_ones():
    with pytest.raises(ValueError, match=r"VideoOptions.tune='fast'.*valid tunes: film, .*zerolatency"):
        VideoOptions(tune='fast')
    with pytest.raises(ValueError, match="codec='libsvtav1'"):
        VideoOptions(codec='libsvtav1', tune='zerolatency')
    assert VideoOptions(tune='zerolatency').stream_options()['tune'] == 'zerolatency' and 'zerolatency' in X264_TUNES
