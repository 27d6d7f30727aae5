// The fault suite's independent checker (docs/reliability.md, "Histories"): reads the histories the suite recorded
// (every request and its answer, with call and return times) as JSON on standard input and checks each with
// Porcupine against two models, partitioned so that each check stays small:
//
//   - a register per event (game and eventId): the first fresh decision (replayed: false) is the event's value; every
//     replay equals it; a 409 is for another payload than the decided one; a 503 or no answer may or may not have
//     decided (it may take effect at any time after its call, so its return is infinity);
//   - a bank per game: an acceptance keeps spent <= budget; game_budget_exhausted only when spent + reward > budget;
//     funding changes raise the budget; reads of the database (before and after a phase) see the state.
//
// Prints one JSON object: a result per partition (Ok, Illegal, Unknown when timed out) and, for each failed one, a
// description of the operations. Exits 0 when every partition is Ok, 1 otherwise, 2 on bad input.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Op is one operation as the suite records it; Return null means it never returned (infinity).
type Op struct {
	Call   int64           `json:"call"`
	Return *int64          `json:"return"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
}

type RegisterInput struct {
	Hash string `json:"hash"`
}

// RegisterOutput: kind is decision, conflict or unknown.
type RegisterOutput struct {
	Kind     string `json:"kind"`
	Value    string `json:"value"`
	Replayed bool   `json:"replayed"`
}

// BankInput: kind is event (reward), fund (amount) or read.
type BankInput struct {
	Kind   string `json:"kind"`
	Reward int64  `json:"reward"`
	Amount int64  `json:"amount"`
}

// BankOutput: for events accepted, exhausted, other (another rejection), replayed or unknown; for funding ok,
// failed or unknown; for reads the state seen.
type BankOutput struct {
	Kind   string `json:"kind"`
	Spent  int64  `json:"spent"`
	Budget int64  `json:"budget"`
}

type Partition struct {
	Key     string      `json:"key"`
	Initial *BankOutput `json:"initial,omitempty"`
	Ops     []Op        `json:"ops"`
}

type Input struct {
	Registers []Partition `json:"registers"`
	Banks     []Partition `json:"banks"`
	TimeoutMs int64       `json:"timeoutMs"`
}

type Failure struct {
	Model  string   `json:"model"`
	Key    string   `json:"key"`
	Result string   `json:"result"`
	Ops    []string `json:"ops"`
}

type Output struct {
	Registers int       `json:"registers"`
	Banks     int       `json:"banks"`
	Ok        bool      `json:"ok"`
	Failures  []Failure `json:"failures"`
}

type register struct {
	decided bool
	hash    string
	// The decision's value; empty when an operation without an answer decided and no answer has shown it yet.
	value string
}

var registerModel = porcupine.NondeterministicModel{
	Init: func() []interface{} { return []interface{}{register{}} },
	Step: func(state, input, output interface{}) []interface{} {
		s := state.(register)
		in := input.(RegisterInput)
		out := output.(RegisterOutput)
		switch out.Kind {
		case "unknown":
			if s.decided {
				return []interface{}{s}
			}
			return []interface{}{s, register{decided: true, hash: in.Hash}}
		case "conflict":
			if s.decided && s.hash != in.Hash {
				return []interface{}{s}
			}
		case "decision":
			if !out.Replayed {
				if !s.decided {
					return []interface{}{register{decided: true, hash: in.Hash, value: out.Value}}
				}
				return nil
			}
			if s.decided && s.hash == in.Hash {
				if s.value == "" {
					return []interface{}{register{decided: true, hash: s.hash, value: out.Value}}
				}
				if s.value == out.Value {
					return []interface{}{s}
				}
			}
		}
		return nil
	},
	DescribeOperation: func(input, output interface{}) string {
		out := output.(RegisterOutput)
		return fmt.Sprintf("payload %.12s -> %s %s replayed=%v", input.(RegisterInput).Hash, out.Kind, out.Value, out.Replayed)
	},
}

type bank struct{ spent, budget int64 }

func bankModel(initial BankOutput) porcupine.NondeterministicModel {
	return porcupine.NondeterministicModel{
		Init: func() []interface{} { return []interface{}{bank{initial.Spent, initial.Budget}} },
		Step: func(state, input, output interface{}) []interface{} {
			s := state.(bank)
			in := input.(BankInput)
			out := output.(BankOutput)
			switch in.Kind {
			case "event":
				fits := s.spent+in.Reward <= s.budget
				switch out.Kind {
				case "accepted":
					if fits {
						return []interface{}{bank{s.spent + in.Reward, s.budget}}
					}
				case "exhausted":
					if !fits {
						return []interface{}{s}
					}
				case "other", "replayed":
					return []interface{}{s}
				case "unknown":
					if fits {
						return []interface{}{s, bank{s.spent + in.Reward, s.budget}}
					}
					return []interface{}{s}
				}
			case "fund":
				switch out.Kind {
				case "ok":
					return []interface{}{bank{s.spent, s.budget + in.Amount}}
				case "failed":
					return []interface{}{s}
				case "unknown":
					return []interface{}{s, bank{s.spent, s.budget + in.Amount}}
				}
			case "read":
				if out.Spent == s.spent && out.Budget == s.budget {
					return []interface{}{s}
				}
			}
			return nil
		},
		DescribeOperation: func(input, output interface{}) string {
			in := input.(BankInput)
			out := output.(BankOutput)
			switch in.Kind {
			case "event":
				return fmt.Sprintf("event reward %d -> %s", in.Reward, out.Kind)
			case "fund":
				return fmt.Sprintf("fund %d -> %s", in.Amount, out.Kind)
			}
			return fmt.Sprintf("read -> spent %d budget %d", out.Spent, out.Budget)
		},
	}
}

func operations[I, O any](p Partition) ([]porcupine.Operation, error) {
	ops := make([]porcupine.Operation, 0, len(p.Ops))
	for i, op := range p.Ops {
		var in I
		var out O
		if err := json.Unmarshal(op.Input, &in); err != nil {
			return nil, fmt.Errorf("%s op %d input: %w", p.Key, i, err)
		}
		if err := json.Unmarshal(op.Output, &out); err != nil {
			return nil, fmt.Errorf("%s op %d output: %w", p.Key, i, err)
		}
		ret := int64(math.MaxInt64)
		if op.Return != nil {
			ret = *op.Return
		}
		if ret < op.Call {
			return nil, fmt.Errorf("%s op %d returns before its call", p.Key, i)
		}
		ops = append(ops, porcupine.Operation{ClientId: i, Input: in, Call: op.Call, Output: out, Return: ret})
	}
	return ops, nil
}

// describe lists a failed partition's operations in call order (the first 40), for the report.
func describe(model porcupine.Model, ops []porcupine.Operation) []string {
	sorted := append([]porcupine.Operation(nil), ops...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Call < sorted[j].Call })
	lines := []string{}
	for i, op := range sorted {
		if i == 40 {
			lines = append(lines, fmt.Sprintf("... %d more", len(sorted)-40))
			break
		}
		ret := "never"
		if op.Return != math.MaxInt64 {
			ret = fmt.Sprint(op.Return)
		}
		lines = append(lines, fmt.Sprintf("[%d, %s] %s", op.Call, ret, model.DescribeOperation(op.Input, op.Output)))
	}
	return lines
}

func main() {
	var input Input
	if err := json.NewDecoder(os.Stdin).Decode(&input); err != nil {
		fmt.Fprintf(os.Stderr, "faults-checker: cannot read the histories: %v\n", err)
		os.Exit(2)
	}
	timeout := time.Duration(input.TimeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	result := Output{Registers: len(input.Registers), Banks: len(input.Banks), Ok: true, Failures: []Failure{}}
	check := func(name string, p Partition, model porcupine.Model, ops []porcupine.Operation) {
		verdict := porcupine.CheckOperationsTimeout(model, ops, timeout)
		if verdict != porcupine.Ok {
			result.Ok = false
			result.Failures = append(result.Failures, Failure{name, p.Key, string(verdict), describe(model, ops)})
		}
	}
	register := registerModel.ToModel()
	for _, p := range input.Registers {
		ops, err := operations[RegisterInput, RegisterOutput](p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "faults-checker: %v\n", err)
			os.Exit(2)
		}
		check("register", p, register, ops)
	}
	for _, p := range input.Banks {
		if p.Initial == nil {
			fmt.Fprintf(os.Stderr, "faults-checker: bank %s has no initial state\n", p.Key)
			os.Exit(2)
		}
		ops, err := operations[BankInput, BankOutput](p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "faults-checker: %v\n", err)
			os.Exit(2)
		}
		model := bankModel(*p.Initial)
		check("bank", p, model.ToModel(), ops)
	}
	if err := json.NewEncoder(os.Stdout).Encode(result); err != nil {
		os.Exit(2)
	}
	if !result.Ok {
		os.Exit(1)
	}
}
