// A job worker for examples/order.bpmn, written with Zeebe's Go client: it reserves an order's
// items, ships paid orders, and releases the items of orders not paid in time.
//
//	go -C examples/worker run .
//
// It talks to the gateway in ZEEBE_ADDRESS (default 127.0.0.1:26500, plaintext), the variable
// Zeebe's clients read, takes the jobs pushed to it (job streaming) and works until Ctrl-C.
//
// The client is github.com/camunda/zeebe/clients/go/v8 v8.5.25, the newest Go client the module
// proxy serves (compat/go says why); the same module compat/go tests, so both share Go's cache.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/camunda/zeebe/clients/go/v8/pkg/entities"
	"github.com/camunda/zeebe/clients/go/v8/pkg/worker"
	"github.com/camunda/zeebe/clients/go/v8/pkg/zbc"
)

// The shop's catalogue: what each item weighs, in grams. An item it does not list is not in
// stock.
var catalogue = map[string]int{"book": 800, "lamp": 2400, "mug": 400, "chair": 7500}

// The variables of an order instance the handlers read.
type order struct {
	OrderID      string   `json:"orderId"`
	Items        []string `json:"items"`
	Country      string   `json:"country"`
	ShippingCost float64  `json:"shippingCost"`
}

// A handler reads an order and returns the variables its job completes with.
type handler func(order) (map[string]interface{}, error)

func main() {
	address := os.Getenv("ZEEBE_ADDRESS")
	if address == "" {
		address = "127.0.0.1:26500"
	}
	client, err := zbc.NewClient(&zbc.ClientConfig{
		GatewayAddress:         address,
		UsePlaintextConnection: true,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot reach the gateway at %s: %v\n", address, err)
		os.Exit(1)
	}
	defer client.Close()

	handlers := map[string]handler{
		"reserve-items": reserveItems,
		"ship-order":    shipOrder,
		"release-items": releaseItems,
	}
	types := make([]string, 0, len(handlers))
	workers := make([]worker.JobWorker, 0, len(handlers))
	for jobType, handle := range handlers {
		types = append(types, jobType)
		workers = append(workers, client.NewJobWorker().
			JobType(jobType).
			Handler(work(jobType, handle)).
			Name("example-worker").
			Timeout(time.Minute).
			StreamEnabled(true).
			Open())
	}
	sort.Strings(types)
	fmt.Printf("working on %s jobs from %s (Ctrl-C stops)\n", strings.Join(types, ", "), address)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	for _, w := range workers {
		w.Close()
		w.AwaitClose()
	}
}

// work runs a handler on each job of its type: it completes the job with the handler's
// variables, or fails it with the handler's error (Zeebe retries it while it has retries left,
// then raises an incident).
func work(jobType string, handle handler) worker.JobHandler {
	return func(jobs worker.JobClient, job entities.Job) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var o order
		err := job.GetVariablesAs(&o)
		var variables map[string]interface{}
		if err == nil {
			variables, err = handle(o)
		}
		if err != nil {
			fmt.Printf("%-14s order %s: %v\n", jobType, o.OrderID, err)
			_, failErr := jobs.NewFailJobCommand().JobKey(job.Key).Retries(job.Retries - 1).
				ErrorMessage(err.Error()).Send(ctx)
			if failErr != nil {
				fmt.Fprintf(os.Stderr, "cannot fail job %d: %v\n", job.Key, failErr)
			}
			return
		}
		complete, err := jobs.NewCompleteJobCommand().JobKey(job.Key).VariablesFromMap(variables)
		if err == nil {
			_, err = complete.Send(ctx)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "cannot complete job %d: %v\n", job.Key, err)
		}
	}
}

// reserveItems reserves the order's items when the catalogue has them all, and weighs them for
// the shipping cost decision.
func reserveItems(o order) (map[string]interface{}, error) {
	grams := 0
	var missing []string
	for _, item := range o.Items {
		weight, ok := catalogue[item]
		if !ok {
			missing = append(missing, item)
		}
		grams += weight
	}
	if len(o.Items) == 0 || len(missing) > 0 {
		fmt.Printf("%-14s order %s: not in stock: %s\n", "reserve-items", o.OrderID,
			strings.Join(missing, ", "))
		return map[string]interface{}{"inStock": false, "missing": missing}, nil
	}
	weightKg := float64(grams) / 1000
	fmt.Printf("%-14s order %s: %s reserved (%g kg)\n", "reserve-items", o.OrderID,
		strings.Join(o.Items, ", "), weightKg)
	return map[string]interface{}{"inStock": true, "weightKg": weightKg}, nil
}

// shipOrder hands a paid order to the carrier.
func shipOrder(o order) (map[string]interface{}, error) {
	if o.Country == "" {
		return nil, fmt.Errorf("the order has no country to ship to")
	}
	tracking := "BEE-" + o.OrderID
	fmt.Printf("%-14s order %s: shipped to %s for %.2f EUR, tracking number %s\n", "ship-order",
		o.OrderID, o.Country, o.ShippingCost, tracking)
	return map[string]interface{}{"trackingNumber": tracking}, nil
}

// releaseItems puts back the items of an order that was not paid in time.
func releaseItems(o order) (map[string]interface{}, error) {
	fmt.Printf("%-14s order %s: not paid in time, %s released\n", "release-items", o.OrderID,
		strings.Join(o.Items, ", "))
	return map[string]interface{}{"released": true}, nil
}
