// Command benchbare is the start-up floor healthctl is measured against: a
// bare Go GET with the same heavy dependencies linked as healthctl (cobra,
// viper, color, tablewriter, and pgx's pgconn for postgres://),
// so bench-probe.sh can show what healthctl adds on top of their start-up.
package main

import (
	"io"
	"net/http"
	"os"

	"github.com/fatih/color"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// keep references the libraries so they are linked and initialised.
var keep = []any{cobra.Command{}, viper.New, color.New, tablewriter.NewTable, pgconn.ParseConfig}

func main() {
	if len(os.Args) < 2 {
		os.Exit(2)
	}
	tr := &http.Transport{DisableKeepAlives: true}
	resp, err := (&http.Client{Transport: tr}).Get(os.Args[1])
	if err != nil {
		os.Exit(1)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		os.Exit(1)
	}
}
