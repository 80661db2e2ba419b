"""Aliengo's trained walking policy and its training figures (trained with ``h1_locomotion.policy.train --robot aliengo``)."""
