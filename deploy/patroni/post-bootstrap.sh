#!/bin/sh
# Run once by Patroni on the node that bootstraps the cluster ($1: a connection string as its
# superuser): the service's role and database, which the standby then receives by replication.
set -eu
psql -v ON_ERROR_STOP=1 -d "$1" -c "CREATE ROLE pagos LOGIN PASSWORD '${PAGOS_DB_PASSWORD:-pagos}'" -c "CREATE DATABASE pagos OWNER pagos"
