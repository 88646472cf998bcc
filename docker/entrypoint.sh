#!/bin/sh
# Container entrypoint (spec §1.4.3-4): every argument goes to the gateway;
# four defaults are added in front, each only when the caller passed no form
# of that flag (hyphen, underscore, alias, `--flag value` or `--flag=value`,
# or the environment variable the gateway would fall back to):
#   --hostname=0.0.0.0                    (listen-host, hostname)
#   --data-dir=/var/lib/warehouse-emulator (data-dir, database; WAREHOUSE_EMULATOR_DATA_DIR, BIGQUERY_EMULATOR_DATA_DIR)
#   --seed-data-file=<bundled sample data> (seed-data-file, seed-yaml, data-from-yaml)
#   --local-files=/data                    (local-files; WAREHOUSE_EMULATOR_LOCAL_FILES, BIGQUERY_EMULATOR_LOCAL_FILES):
#     the directory load/extract jobs, LOAD DATA, EXPORT DATA, external tables and
#     UDF libraries may read and write as file:// paths (mount yours there:
#     -v "$PWD/fixtures:/data"); without it a gateway listening on 0.0.0.0
#     refuses every local path.
# The bundled seed is also left out once the data dir holds a catalog: seed
# rows are appended at every start (spec §1.3.1.9), so a persistent volume
# would otherwise get the samples again on each restart.
set -eu

seed_file="${WAREHOUSE_EMULATOR_BUNDLED_SEED:-/usr/local/share/warehouse-emulator/seed/public.yaml}"
default_dir=/var/lib/warehouse-emulator
files_dir=/data

want_host=1
want_dir=1
want_seed=1
want_files=1
flag_dir=""
db_dir=""
pending=""
for arg in "$@"; do
  if [ -n "$pending" ]; then
    # the value of a `--flag value` pair
    case "$pending" in
      dir) flag_dir="$arg" ;;
      db) db_dir="$(dirname -- "$arg")" ;;
    esac
    pending=""
    continue
  fi
  case "$arg" in
    --) break ;;
    --hostname | --hostname=* | --listen-host | --listen-host=* | --listen_host | --listen_host=*) want_host=0 ;;
    --data-dir | --data_dir) want_dir=0; pending=dir ;;
    --data-dir=* | --data_dir=*) want_dir=0; flag_dir="${arg#*=}" ;;
    --database) want_dir=0; pending=db ;;
    --database=*) want_dir=0; db_dir="$(dirname -- "${arg#*=}")" ;;
    --seed-data-file | --seed-data-file=* | --seed_data_file | --seed_data_file=* | \
      --seed-yaml | --seed-yaml=* | --seed_yaml | --seed_yaml=* | \
      --data-from-yaml | --data-from-yaml=* | --data_from_yaml | --data_from_yaml=*) want_seed=0 ;;
    --local-files | --local-files=* | --local_files | --local_files=*) want_files=0 ;;
  esac
done
if [ -n "${WAREHOUSE_EMULATOR_DATA_DIR:-}" ] || [ -n "${BIGQUERY_EMULATOR_DATA_DIR:-}" ]; then want_dir=0; fi
if [ -n "${WAREHOUSE_EMULATOR_LOCAL_FILES:-}" ] || [ -n "${BIGQUERY_EMULATOR_LOCAL_FILES:-}" ]; then want_files=0; fi

# The data dir the gateway will use (same precedence as its CLI: flag, --database, env, default).
data_dir="${flag_dir:-${db_dir:-${WAREHOUSE_EMULATOR_DATA_DIR:-${BIGQUERY_EMULATOR_DATA_DIR:-$default_dir}}}}"

if [ "$want_files" = 1 ]; then set -- "--local-files=$files_dir" "$@"; fi
if [ "$want_seed" = 1 ] && [ -f "$seed_file" ] && [ ! -e "$data_dir/catalog.store" ]; then
  set -- "--seed-data-file=$seed_file" "$@"
fi
if [ "$want_dir" = 1 ]; then set -- "--data-dir=$default_dir" "$@"; fi
if [ "$want_host" = 1 ]; then set -- --hostname=0.0.0.0 "$@"; fi

exec warehouse-emulator "$@"
