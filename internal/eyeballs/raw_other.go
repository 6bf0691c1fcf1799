//go:build !(linux && (amd64 || arm64))

package eyeballs

import (
	"context"
	"net"
	"net/netip"
)

// dialRaw is net.Dialer's dial everywhere but Linux.
func dialRaw(context.Context, netip.Addr, uint16) (net.Conn, error, bool) { return nil, nil, false }
