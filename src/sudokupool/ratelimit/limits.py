"""Requests per window for each tier of key."""

from __future__ import annotations

from dataclasses import dataclass

from sudokupool.config import Settings
from sudokupool.ratelimit.keys import Tier


@dataclass(frozen=True)
class Limits:
    """Requests per window for each tier."""

    anonymous: int = 60
    keyed: int = 600
    pro: int = 6000

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(settings.limit_anonymous, settings.limit_keyed, settings.limit_pro)

    def of(self, tier: Tier) -> int:
        if tier is Tier.PRO:
            return self.pro
        if tier is Tier.KEYED:
            return self.keyed
        return self.anonymous
