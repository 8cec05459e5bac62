# svc's Consul token: its state, service discovery and the leader lock; nothing more.
key_prefix "svc/" { policy = "write" }   # state (consulPrefix), routes and load of the replicas
service_prefix "" { policy = "read" }    # discovery (health/service)
node_prefix ""    { policy = "read" }    # health answers include the node
session_prefix "" { policy = "write" }   # the leader lock (one replica scales and reconciles)
