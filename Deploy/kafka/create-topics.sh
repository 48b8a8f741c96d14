#!/usr/bin/env bash
# Creates Flowmeter's five topics (docs/api.md#kafka-topics) on a Kafka cluster, or checks they exist with the right settings.
# usage: Deploy/kafka/create-topics.sh BOOTSTRAP_SERVERS
#   environment (defaults for production): REPLICATION=3  MIN_INSYNC=2  EVENTS_PARTITIONS=12  PARTITIONS=6
#     EVENTS_RETENTION_MS=604800000 (7 d)  ROLLUPS_RETENTION_MS=1209600000 (14 d)  ALERTS_RETENTION_MS=2592000000
#     (30 d)  DEPLOYS_RETENTION_MS=31536000000 (365 d; every marker is history, so no compaction by service)
#     MANIFESTS_RETENTION_MS=-1 (kept for ever: a sink that starts empty rebuilds every build's manifest from it)
#     KAFKA_TOPICS=kafka-topics.sh (the path of Kafka's tool)
# The compose file runs it with REPLICATION=1 MIN_INSYNC=1 against its single broker. Running it again is safe.
set -euo pipefail

bootstrap=${1:?usage: $0 BOOTSTRAP_SERVERS}
replication=${REPLICATION:-3}
min_insync=${MIN_INSYNC:-2}
kafka_topics=${KAFKA_TOPICS:-kafka-topics.sh}

if [ "$min_insync" -ge "$replication" ] && [ "$replication" -gt 1 ]; then
  echo "error: MIN_INSYNC ($min_insync) must be below REPLICATION ($replication), or one broker down stops writes" >&2
  exit 2
fi

create() {
  local topic=$1 partitions=$2 retention=$3 cleanup=$4
  echo "==> $topic: $partitions partitions, replication $replication, min.insync.replicas $min_insync"
  "$kafka_topics" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$topic" \
    --partitions "$partitions" --replication-factor "$replication" \
    --config "min.insync.replicas=$min_insync" \
    --config "retention.ms=$retention" \
    --config "cleanup.policy=$cleanup" \
    --config "compression.type=producer"
}

# The log the store is built from: `flowmeter store rebuild` reaches back as far as this retention (14 days by default,
# the store's minute retention).
create flowmeter.batches.v1 "${BATCHES_PARTITIONS:-12}" "${BATCHES_RETENTION_MS:-1209600000}" delete
create flowmeter.alerts.v1 "${PARTITIONS:-6}" "${ALERTS_RETENTION_MS:-2592000000}" delete
create flowmeter.deploys.v1 "${PARTITIONS:-6}" "${DEPLOYS_RETENTION_MS:-31536000000}" delete
create flowmeter.manifests.v1 "${PARTITIONS:-6}" "${MANIFESTS_RETENTION_MS:--1}" delete

"$kafka_topics" --bootstrap-server "$bootstrap" --describe --topic 'flowmeter\..*'
