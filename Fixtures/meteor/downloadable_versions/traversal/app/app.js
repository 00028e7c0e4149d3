console.log('app generation 2');
