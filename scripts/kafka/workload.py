"""The produce and consume load on the cluster's one partition, from kafka-python.

kafka-python, not confluent-kafka: its consumer runs with `group_id=None`, so `assign()` reads the
partition without ever asking for a group coordinator, and no `__consumer_offsets` topic (nor its
records) enters the metadata log; confluent-kafka's Python consumer refuses to start without a
group.id, and librdkafka then looks the coordinator up. It is pure Python (no native wheel) and
speaks Kafka 4.x's protocol versions.

The producer sends with acks=all and without idempotence (an idempotent producer would have the
controller allocate producer ids: records the spec does not model).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from cluster import TOPIC
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaConfigurationError, KafkaError

# kafka-python logs every refused connection at WARNING/ERROR: the faults make many.
logging.getLogger("kafka").setLevel(logging.CRITICAL)


@dataclass
class Counts:
    sent: int = 0
    acked: int = 0
    failed: int = 0
    consumed: int = 0
    errors: dict[str, int] = field(default_factory=dict)


class Workload:
    """A producer thread (acks=all, `rate` messages a second) and an assign()-ing consumer."""

    def __init__(self, bootstrap: str, rate: float = 50.0) -> None:
        self.bootstrap = bootstrap
        self.rate = rate
        self.counts = Counts()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._produce, name="mc-produce", daemon=True),
            threading.Thread(target=self._consume, name="mc-consume", daemon=True),
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> Counts:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        return self.counts

    def _acked(self, _metadata: object) -> None:
        with self._lock:
            self.counts.acked += 1

    def _failed(self, error: Exception) -> None:
        with self._lock:
            self.counts.failed += 1
            name = type(error).__name__
            self.counts.errors[name] = self.counts.errors.get(name, 0) + 1

    def _produce(self) -> None:
        producer = self._connect(
            lambda: KafkaProducer(
                bootstrap_servers=self.bootstrap,
                acks="all",
                enable_idempotence=False,
                linger_ms=5,
                request_timeout_ms=5000,
                delivery_timeout_ms=15000,
                max_block_ms=5000,
                client_id="mc-producer",
            )
        )
        if producer is None:
            return
        index = 0
        while not self._stop.is_set():
            try:
                future = producer.send(TOPIC, value=b"%d" % index, partition=0)
                future.add_callback(self._acked)
                future.add_errback(self._failed)
                self.counts.sent += 1
            except KafkaError as error:  # metadata not available within max_block_ms
                self._failed(error)
            index += 1
            time.sleep(1.0 / self.rate)
        producer.close(timeout=10)

    def _consume(self) -> None:
        consumer = self._connect(
            lambda: KafkaConsumer(
                bootstrap_servers=self.bootstrap,
                group_id=None,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                client_id="mc-consumer",
            )
        )
        if consumer is None:
            return
        consumer.assign([TopicPartition(TOPIC, 0)])
        while not self._stop.is_set():
            try:
                batches = consumer.poll(timeout_ms=500)
            except KafkaError:
                time.sleep(0.5)
                continue
            self.counts.consumed += sum(len(records) for records in batches.values())
        consumer.close()

    def _connect(self, make):  # type: ignore[no-untyped-def]
        """The client `make` builds, retried while no broker answers (the cluster may be down)."""
        while not self._stop.is_set():
            try:
                return make()
            except KafkaConfigurationError:
                raise
            except KafkaError:
                time.sleep(1.0)
        return None
