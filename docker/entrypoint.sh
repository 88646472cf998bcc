#!/bin/sh
# Spec §1.4: inject three defaults only when the caller did not pass that flag.
set -e
host=1; dir=1; seed=1
for a in "$@"; do
  case "$a" in
    --hostname|--hostname=*|--listen-host|--listen-host=*|--listen_host|--listen_host=*) host=0 ;;
    --data-dir|--data-dir=*|--data_dir|--data_dir=*) dir=0 ;;
    --seed-data-file|--seed-data-file=*|--seed_data_file|--seed_data_file=*|--seed-yaml|--seed-yaml=*|--data-from-yaml|--data-from-yaml=*) seed=0 ;;
  esac
done
set -- "$@"
[ $host = 1 ] && set -- --hostname=0.0.0.0 "$@"
[ $dir = 1 ] && set -- --data-dir=/var/lib/warehouse-emulator "$@"
if [ $seed = 1 ] && [ -f /app/dist/seed/public.yaml ]; then set -- --seed-data-file=/app/dist/seed/public.yaml "$@"; fi
exec node /app/dist/gateway.js "$@"
