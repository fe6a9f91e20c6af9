//go:build probe_pgx

package main

import _ "github.com/jackc/pgx/v5/stdlib"
