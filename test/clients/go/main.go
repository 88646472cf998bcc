// A program using Google's Go client (cloud.google.com/go/bigquery, Debian's
// golang-google-cloud-dev) against the emulator, built in GOPATH mode offline
// by go-client.test.ts. It prints one JSON line per step; the test checks them.
// Usage: main <endpoint> <project> <local CSV file>
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"time"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/civil"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

func main() {
	if len(os.Args) != 4 {
		fail("usage: main <endpoint> <project> <csv file>")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := bigquery.NewClient(ctx, os.Args[2], option.WithEndpoint(os.Args[1]+"/bigquery/v2/"), option.WithoutAuthentication())
	check("client", err)
	defer client.Close()

	// Datasets: create in a location, update, list.
	ds := client.Dataset("go_ds")
	check("dataset create", ds.Create(ctx, &bigquery.DatasetMetadata{Location: "US", Description: "from go"}))
	md, err := ds.Update(ctx, bigquery.DatasetMetadataToUpdate{Description: "updated"}, "")
	check("dataset update", err)
	var names []string
	it := client.Datasets(ctx)
	for {
		d, err := it.Next()
		if err == iterator.Done {
			break
		}
		check("dataset list", err)
		names = append(names, d.DatasetID)
	}
	emit("dataset", map[string]interface{}{"location": md.Location, "description": md.Description, "listed": names})

	// Tables: a schema with every type this client knows, repeated and nested fields.
	schema := bigquery.Schema{
		{Name: "s", Type: bigquery.StringFieldType, Required: true},
		{Name: "b", Type: bigquery.BytesFieldType},
		{Name: "i", Type: bigquery.IntegerFieldType},
		{Name: "f", Type: bigquery.FloatFieldType},
		{Name: "bo", Type: bigquery.BooleanFieldType},
		{Name: "ts", Type: bigquery.TimestampFieldType},
		{Name: "d", Type: bigquery.DateFieldType},
		{Name: "t", Type: bigquery.TimeFieldType},
		{Name: "dt", Type: bigquery.DateTimeFieldType},
		{Name: "n", Type: bigquery.NumericFieldType},
		{Name: "g", Type: bigquery.GeographyFieldType},
		{Name: "tags", Type: bigquery.StringFieldType, Repeated: true},
		{Name: "rec", Type: bigquery.RecordFieldType, Schema: bigquery.Schema{
			{Name: "x", Type: bigquery.IntegerFieldType},
			{Name: "ys", Type: bigquery.StringFieldType, Repeated: true},
		}},
	}
	table := ds.Table("every_type")
	check("table create", table.Create(ctx, &bigquery.TableMetadata{Schema: schema, Description: "all types"}))
	tmd, err := table.Metadata(ctx)
	check("table get", err)
	emit("table", map[string]interface{}{"fields": len(tmd.Schema), "type": tmd.Type, "description": tmd.Description})

	// Streaming insert (insertAll) with insert ids.
	ts := time.Date(2024, 3, 1, 12, 30, 45, 123456000, time.UTC)
	rows := []*bigquery.ValuesSaver{
		{Schema: schema, InsertID: "r1", Row: []bigquery.Value{
			"alpha", []byte{0, 1, 255}, int64(42), 2.5, true, ts,
			civil.Date{Year: 2024, Month: 2, Day: 29}, civil.Time{Hour: 23, Minute: 59, Second: 58, Nanosecond: 500000000},
			civil.DateTime{Date: civil.Date{Year: 1999, Month: 12, Day: 31}, Time: civil.Time{Hour: 1, Minute: 2, Second: 3}},
			big.NewRat(12345, 100), "POINT(1 2)", []bigquery.Value{"a", "b"}, []bigquery.Value{int64(7), []bigquery.Value{"p", "q"}},
		}},
		{Schema: schema, InsertID: "r2", Row: []bigquery.Value{
			"beta", nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, []bigquery.Value{}, nil,
		}},
	}
	check("insert", table.Inserter().Put(ctx, rows))
	// The same insert ids again: de-duplicated.
	check("insert again", table.Inserter().Put(ctx, rows[:1]))

	// A query with parameters, run as a job and polled until done.
	q := client.Query(`SELECT s, b, i, f, bo, ts, d, t, dt, n, g, tags, rec FROM go_ds.every_type
		WHERE i = @i OR s = @s OR ts > @after ORDER BY s`)
	q.Parameters = []bigquery.QueryParameter{
		{Name: "i", Value: int64(42)},
		{Name: "s", Value: "beta"},
		{Name: "after", Value: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	job, err := q.Run(ctx)
	check("query run", err)
	polls := 0
	var status *bigquery.JobStatus
	for {
		status, err = job.Status(ctx)
		check("job status", err)
		polls++
		if status.Done() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	check("job error", status.Err())
	again, err := client.JobFromIDLocation(ctx, job.ID(), job.Location())
	check("job get", err)
	emit("job", map[string]interface{}{"state": status.State == bigquery.Done, "location": job.Location(), "sameId": again.ID() == job.ID(), "polled": polls > 0})

	// Row iteration: every value as the client decodes it.
	ri, err := job.Read(ctx)
	check("job read", err)
	for {
		var row []bigquery.Value
		err := ri.Next(&row)
		if err == iterator.Done {
			break
		}
		check("row", err)
		emit("row", describe(row))
	}
	emit("rows", map[string]interface{}{"total": ri.TotalRows, "schema": len(ri.Schema)})

	// Positional parameters and a struct destination.
	q2 := client.Query("SELECT ? AS a, ? * 2 AS b, ? AS c")
	q2.Parameters = []bigquery.QueryParameter{{Value: "x"}, {Value: 21}, {Value: []string{"u", "v"}}}
	ri2, err := q2.Read(ctx)
	check("query read", err)
	var out struct {
		A string
		B int64
		C []string
	}
	check("struct row", ri2.Next(&out))
	emit("positional", out)

	// Load from a local file (a media upload), then read the table back.
	f, err := os.Open(os.Args[3])
	check("open csv", err)
	src := bigquery.NewReaderSource(f)
	src.SkipLeadingRows = 1
	src.Schema = bigquery.Schema{{Name: "name", Type: bigquery.StringFieldType}, {Name: "n", Type: bigquery.IntegerFieldType}}
	loader := ds.Table("loaded").LoaderFrom(src)
	loader.WriteDisposition = bigquery.WriteTruncate
	ljob, err := loader.Run(ctx)
	check("load run", err)
	lstatus, err := ljob.Wait(ctx)
	check("load wait", err)
	check("load error", lstatus.Err())
	lstats := lstatus.Statistics.Details.(*bigquery.LoadStatistics)
	var loaded []map[string]bigquery.Value
	lit := ds.Table("loaded").Read(ctx)
	for {
		var row map[string]bigquery.Value
		err := lit.Next(&row)
		if err == iterator.Done {
			break
		}
		check("loaded row", err)
		loaded = append(loaded, row)
	}
	emit("load", map[string]interface{}{"outputRows": lstats.OutputRows, "rows": loaded})

	// A failing query surfaces the service's error.
	_, err = client.Query("SELECT * FROM go_ds.missing").Read(ctx)
	emit("error", map[string]interface{}{"message": fmt.Sprint(err)})

	check("table delete", table.Delete(ctx))
	check("dataset delete", ds.DeleteWithContents(ctx))
	emit("done", true)
}

// describe turns a row into JSON-friendly values, naming each Go type the client chose.
func describe(row []bigquery.Value) []interface{} {
	out := make([]interface{}, len(row))
	for i, v := range row {
		out[i] = value(v)
	}
	return out
}

func value(v bigquery.Value) interface{} {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		return map[string]interface{}{"bytes": x}
	case time.Time:
		return map[string]interface{}{"time": x.UTC().Format(time.RFC3339Nano)}
	case civil.Date, civil.Time, civil.DateTime:
		return map[string]interface{}{fmt.Sprintf("%T", x): fmt.Sprint(x)}
	case *big.Rat:
		return map[string]interface{}{"rat": x.FloatString(9)}
	case []bigquery.Value:
		return describe(x)
	default:
		return v
	}
}

func emit(step string, v interface{}) {
	b, err := json.Marshal(map[string]interface{}{"step": step, "value": v})
	check("json", err)
	fmt.Println(string(b))
}

func check(what string, err error) {
	if err != nil {
		fail(what + ": " + err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}
