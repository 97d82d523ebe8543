# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the benchmark scripts that start services on 127.0.0.1 (bench/mqtt_*.sh,
# bench/rtsp_views.sh): a free port, and a local mosquitto without persistence.

# A TCP port of 127.0.0.1 free a moment ago.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Writes DIR/mosquitto.conf for a broker on 127.0.0.1:PORT, anonymous, persistence off.
write_mosquitto_conf() {
  cat > "$1/mosquitto.conf" <<CONF
listener $2 127.0.0.1
allow_anonymous true
persistence false
user $(id -un)
CONF
}

# Starts mosquitto on DIR/mosquitto.conf, its log appended to DIR/mosquitto.log; sets broker_pid.
start_mosquitto() {
  /usr/sbin/mosquitto -c "$1/mosquitto.conf" >> "$1/mosquitto.log" 2>&1 &
  broker_pid=$!
}
