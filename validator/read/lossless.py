"""The lossless (PFC/ECN) settings of a RoCE fabric in a design: switch and NIC side (part of the Design model,
validator/read/model.py)."""

from typing import Annotated, Literal

from pydantic import Field

from validator.read.fields import Model, Positive
from validator.read.names import Dscp


class Ecn(Model):
    min_threshold_kb: Positive = Field(description="Queue depth (KB) where ECN marking starts.")
    max_threshold_kb: Positive = Field(description="Queue depth (KB) where every packet is marked.")
    probability_pct: Annotated[float, Field(ge=0, le=100)] = Field(description="Marking probability at max.")


class PfcWatchdog(Model):
    enabled: bool = Field(description="Detect and break PFC storms (a stuck lossless queue).")
    detection_ms: Positive | None = Field(None, description="Time a queue may be paused before action.")
    restoration_ms: Positive | None = Field(None, description="Time before the queue is restored.")


class SwitchLossless(Model):
    pfc_priorities: list[Annotated[int, Field(ge=0, le=7)]] = Field(
        description="802.1p priorities with PFC enabled (the RDMA priority, usually 3).")
    dscp_to_tc: dict[Dscp, Annotated[int, Field(ge=0, le=7)]] = Field(
        description="DSCP value (as a string key) to traffic class, e.g. {'26': 3, '48': 6}.")
    roce_tc: Annotated[int, Field(ge=0, le=7)] = Field(description="Traffic class that carries RoCE.")
    cnp_tc: Annotated[int, Field(ge=0, le=7)] | None = Field(None, description="Traffic class for congestion "
                                                             "notification packets (strict priority).")
    ecn: Ecn | None = Field(None, description="ECN (WRED) marking on the RoCE queue.")
    pfc_watchdog: PfcWatchdog | None = Field(None, description="PFC watchdog.")
    mtu: Annotated[int, Field(ge=1280, le=9216)] | None = Field(None, description="Port MTU in bytes.")


class NicLossless(Model):
    pfc_priorities: list[Annotated[int, Field(ge=0, le=7)]] = Field(description="Priorities with PFC on the NIC.")
    roce_dscp: Annotated[int, Field(ge=0, le=63)] = Field(description="DSCP the NIC marks RoCE traffic with.")
    roce_priority: Annotated[int, Field(ge=0, le=7)] = Field(description="802.1p priority of RoCE traffic.")
    cnp_dscp: Annotated[int, Field(ge=0, le=63)] | None = Field(None, description="DSCP of CNPs.")
    trust: Literal["dscp", "pcp"] = Field("dscp", description="What the NIC trusts to classify traffic.")
    ecn: bool = Field(True, description="DCQCN congestion control (react to ECN marks) enabled.")


class Lossless(Model):
    switch: SwitchLossless = Field(description="Lossless settings on every switch of the fabric.")
    nic: NicLossless = Field(description="Lossless settings on every server NIC of the fabric.")
