package probe

import (
	"context"

	"github.com/healthctl/healthctl/internal/probe/dbprobe"
	"github.com/healthctl/healthctl/internal/probe/grpcprobe"
	"github.com/healthctl/healthctl/internal/probe/httpprobe"
	"github.com/healthctl/healthctl/internal/probe/session"
	"github.com/healthctl/healthctl/internal/probe/streamprobe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// exchanges are the table's exchanges: each row's name (scheme.Scheme's
// Name) and the constructor of the exchange that speaks it. The table is
// pure data (internal/scheme); this map is where a row meets its exchange
// file, and every row has one (TestEveryRowHasAnExchange).
var exchanges = map[string]func(ctx context.Context, p *session.Probe) (session.Exchange, error){
	"http": httpprobe.New, "https": httpprobe.New,
	"grpc": grpcprobe.New, "grpcs": grpcprobe.New,
	"tcp": streamprobe.NewStream, "tls": streamprobe.NewStream,
	"redis": dbprobe.NewRedis, "rediss": dbprobe.NewRedis,
	"postgres": dbprobe.NewPostgres,
	"dns":      streamprobe.NewDNS,
	"amqp":     dbprobe.NewAMQP, "amqps": dbprobe.NewAMQP,
	"mysql": dbprobe.NewMySQL,
	"icmp":  streamprobe.NewICMP,
}

// exchangeFor is the exchange of a URL scheme (its row of the scheme
// table), nil for a scheme no protocol speaks.
func exchangeFor(name string) func(ctx context.Context, p *session.Probe) (session.Exchange, error) {
	if row, ok := scheme.LookupScheme(name); ok {
		return exchanges[row.Name]
	}
	return nil
}
