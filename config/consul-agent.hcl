# A single-node Consul dev agent for svc, with ACLs on (default deny).
#
#   consul agent -config-file=config/consul-agent.hcl
#   consul acl bootstrap         # once: prints the management token
#
# Not for production: one server, data in /tmp, plain HTTP.

datacenter       = "dc1"
data_dir         = "/tmp/svc-consul"
server           = true
bootstrap_expect = 1
bind_addr        = "127.0.0.1" # cluster traffic stays on this machine
client_addr      = "0.0.0.0"   # HTTP API (8500) and DNS (8600) on every interface: svc reaches ${attr.unique.network.ip-address}:8500

ui_config {
  enabled = true # http://<host>:8500/ui
}

# Every call needs a token (X-Consul-Token). Tokens to create after the
# bootstrap (policies in config/README.md and docs/operators.md):
#   - the Nomad agent's (service registration),
#   - svc's (KV under svc/, service discovery, the leader session),
#   - a proxy's (Fabio/Traefik: read services and nodes), if you run one.
acl {
  enabled                  = true
  default_policy           = "deny"
  enable_token_persistence = true # tokens set with `consul acl set-agent-token` survive restarts
}
