# A single-node Nomad dev agent for svc: server and client in one process,
# ACLs on, the raw_exec and docker drivers, and the local Consul agent
# (config/consul-agent.hcl) for service registration and checks.
#
#   nomad agent -config=config/nomad-agent.hcl
#   nomad acl bootstrap          # once: prints the management token
#
# Not for production: one server (no fault tolerance), data in /tmp,
# raw_exec runs tasks as the agent's user without isolation.

datacenter = "dc1"   # svc's workload jobs and jobs/svc-server.nomad.json both say "dc1"
region     = "global"
data_dir   = "/tmp/svc-nomad"
bind_addr  = "0.0.0.0" # HTTP API on every interface: the svc job reaches it at ${attr.unique.network.ip-address}:4646

server {
  enabled          = true
  bootstrap_expect = 1
}

client {
  enabled = true
}

# Nomad's clients collect allocation stats (GET /v1/client/allocation/:id/stats)
# only while they publish allocation metrics: svc usage and svc container list
# read CPU and memory from those stats, and count none without this.
telemetry {
  publish_allocation_metrics = true
}

# Every API call needs a token (X-Nomad-Token). docs/operators.md lists the
# policy svc's token needs.
acl {
  enabled = true
}

# The local Consul agent: Nomad registers every allocation's services there
# (svc's workers and the svc gateway itself) and Consul runs their checks.
# The Nomad agent's own Consul token: set `token` here, or export
# CONSUL_HTTP_TOKEN before starting the agent. Its policy (see
# config/README.md): agent_prefix read, node_prefix read, service_prefix write.
consul {
  address          = "127.0.0.1:8500"
  # token          = "<the Nomad agent's Consul token>"
  auto_advertise   = true  # Nomad registers its own agents as the services "nomad" and "nomad-client"
  server_auto_join = true
  client_auto_join = true
}

# raw_exec is off on every client unless enabled: svc's raw_exec workloads and
# the raw_exec variant of the svc job need it.
plugin "raw_exec" {
  config {
    enabled = true
  }
}

# The docker driver (svc's default for workloads) is enabled whenever Docker
# runs on the client; this block only tightens it.
plugin "docker" {
  config {
    allow_privileged = false
    volumes {
      enabled = false # svc's tasks need no host volumes
    }
    # svc puts no registry credentials into jobs: when svc's image registry
    # (imageRegistry) does not allow anonymous pulls, give the clients a
    # Docker credentials file (`docker login` writes one) with pull rights.
    # auth {
    #   config = "/etc/docker-auth.json"
    # }
  }
}
