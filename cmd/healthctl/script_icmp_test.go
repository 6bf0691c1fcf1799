package main

import "golang.org/x/net/icmp"

// [icmp] holds when this process may open an ICMP socket: a ping socket
// (its group within net.ipv4.ping_group_range) or a raw one (root,
// CAP_NET_RAW). probe_icmp.txtar pings the loopback outside a namespace
// only then.
func init() {
	extraConds["icmp"] = func() (bool, error) {
		for _, network := range []string{"udp4", "ip4:icmp"} {
			if c, err := icmp.ListenPacket(network, "0.0.0.0"); err == nil {
				c.Close()
				return true, nil
			}
		}
		return false, nil
	}
}
