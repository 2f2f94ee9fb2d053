# Sourced by the bench scripts (scripts/bench.sh, scripts/bench-serve.sh, bench/serve-cold.sh): the one nginx
# configuration they share.
# nginx_conf DIR WORKERS SERVER... writes DIR/nginx.conf (pid, logs and temporary files under DIR, no access log,
# sendfile, 100,000 requests per keep-alive connection, the image types the benches serve) with one `server { … }`
# line per SERVER argument, e.g. "listen 127.0.0.1:8080 backlog=1024; root /srv/images;".
nginx_conf() {
  local dir=$1 workers=$2 server
  shift 2
  mkdir -p "$dir/logs" "$dir/tmp"
  {
    cat <<CONF
worker_processes $workers;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
daemon on;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  client_body_temp_path $dir/tmp;
  proxy_temp_path $dir/tmp;
  fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp;
  scgi_temp_path $dir/tmp;
  types { image/jpeg jpg; image/png png; image/webp webp; image/gif gif; }
CONF
    for server in "$@"; do echo "  server { $server }"; done
    echo "}"
  } > "$dir/nginx.conf"
}
