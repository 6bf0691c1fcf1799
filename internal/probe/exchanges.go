package probe

import (
	"context"

	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/scheme"
)

// exchanges are the table's exchanges: each row's name (scheme.Scheme's
// Name) and the constructor of the exchange that speaks it. The table is
// pure data (internal/scheme); this map is where a row meets its exchange
// file, and every row has one (TestEveryRowHasAnExchange).
var exchanges = map[string]func(ctx context.Context, p *session.Probe) (session.Exchange, error){
	"http": newHTTP, "https": newHTTP,
	"grpc": newGRPC, "grpcs": newGRPC,
	"tcp": newStream, "tls": newStream,
	"redis": newRedis, "rediss": newRedis,
	"postgres": newPostgres,
	"dns":      newDNS,
	"amqp":     newAMQP, "amqps": newAMQP,
	"mysql": newMySQL,
	"icmp":  newICMP,
}

// exchangeFor is the exchange of a URL scheme (its row of the scheme
// table), nil for a scheme no protocol speaks.
func exchangeFor(name string) func(ctx context.Context, p *session.Probe) (session.Exchange, error) {
	if row, ok := scheme.LookupScheme(name); ok {
		return exchanges[row.Name]
	}
	return nil
}
